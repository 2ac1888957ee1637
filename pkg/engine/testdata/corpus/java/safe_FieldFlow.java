// safe: java.trustbound.session
package com.example.account;

import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpSession;

public class Preferences {
    private String theme = "light";
    private String requested;

    public void read(HttpServletRequest request) {
        this.requested = request.getParameter("theme");
        this.theme = "dark";
    }

    public void save(HttpSession session) {
        session.setAttribute("theme", theme);
    }

    public void update(HttpServletRequest request) {
        read(request);
        save(request.getSession());
    }
}
