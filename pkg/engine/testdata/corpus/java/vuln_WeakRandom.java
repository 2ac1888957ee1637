package com.example.auth;

import java.util.Random;
import javax.servlet.http.Cookie;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

public class VisitorId {
    private final Random rng = new Random();

    public void assign(HttpServletRequest request, HttpServletResponse response) {
        String id = Long.toHexString(rng.nextLong());
        Cookie c = new Cookie("visitor", id); // vuln: java.weakrand.security-use
        c.setSecure(true);
        response.addCookie(c);
        double r = Math.random();
        request.getSession().setAttribute("challenge", String.valueOf(r).substring(2)); // vuln: java.weakrand.security-use
    }

    public void rotate(HttpServletRequest request) {
        request.getSession().setAttribute("nonce", Long.toString(draw(new Random()))); // vuln: java.weakrand.security-use
    }

    private long draw(Random source) {
        return source.nextLong();
    }
}
