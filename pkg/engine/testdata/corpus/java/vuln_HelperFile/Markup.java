package com.example.profile;

final class Markup {
    private Markup() {}

    static String paragraph(String text) {
        StringBuilder sb = new StringBuilder("<p>");
        sb.append(text.trim()).append("</p>");
        return sb.toString();
    }
}
