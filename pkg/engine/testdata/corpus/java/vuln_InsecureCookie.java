package com.example.auth;

import javax.servlet.http.Cookie;
import javax.servlet.http.HttpServletResponse;

public class LoginCookies {
    public void remember(HttpServletResponse response, String userId) {
        Cookie c = new Cookie("uid", userId);
        c.setHttpOnly(true);
        c.setMaxAge(3600);
        response.addCookie(c); // vuln: java.cookie.insecure
    }

    public void plain(HttpServletResponse response) {
        Cookie c = new Cookie("lang", "en");
        c.setSecure(false);
        response.addCookie(c); // vuln: java.cookie.insecure
    }
}
