package com.example.cart;

import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpSession;

public class CartServlet {
    public void add(HttpServletRequest request) {
        HttpSession session = request.getSession();
        String item = request.getParameter("item");
        session.setAttribute("lastItem", item); // vuln: java.trustbound.session
        session.putValue(request.getHeader("X-Slot"), "reserved"); // vuln: java.trustbound.session
    }
}
