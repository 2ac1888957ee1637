// safe: java.xss.writer
package com.example.profile;

import org.springframework.web.util.HtmlUtils;

final class Markup {
    private Markup() {}

    static String paragraph(String text) {
        StringBuilder sb = new StringBuilder("<p>");
        sb.append(HtmlUtils.htmlEscape(text.trim())).append("</p>");
        return sb.toString();
    }
}
