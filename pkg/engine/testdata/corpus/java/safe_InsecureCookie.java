// safe: java.cookie.insecure
package com.example.auth;

import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletResponse;

public class LoginCookies {
    public void remember(HttpServletResponse response, String userId) {
        Cookie c = new Cookie("uid", userId);
        c.setSecure(true);
        c.setHttpOnly(true);
        response.addCookie(c);
    }
}
