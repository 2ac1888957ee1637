// safe: java.weakrand.security-use
package com.example.auth;

import java.security.SecureRandom;
import java.util.Random;
import javax.servlet.http.Cookie;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

public class VisitorId {
    private final SecureRandom rng = new SecureRandom();

    public void assign(HttpServletRequest request, HttpServletResponse response) {
        String id = Long.toHexString(rng.nextLong());
        Cookie c = new Cookie("visitor", id);
        c.setSecure(true);
        response.addCookie(c);
        int shard = new Random().nextInt(8);
        request.getSession().setAttribute("challenge", Integer.toHexString(rng.nextInt()));
        System.out.println("shard " + shard);
    }

    public void rotate(HttpServletRequest request) {
        Random strong = new SecureRandom();
        request.getSession().setAttribute("nonce", Long.toString(draw(strong)));
    }

    private long draw(Random source) {
        return source.nextLong();
    }
}
