package com.example.account;

import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpSession;

public class Preferences {
    private String theme = "light";

    public void read(HttpServletRequest request) {
        this.theme = request.getParameter("theme");
    }

    public void save(HttpSession session) {
        session.setAttribute("theme", theme); // vuln: java.trustbound.session
    }

    public void update(HttpServletRequest request) {
        read(request);
        save(request.getSession());
    }
}
