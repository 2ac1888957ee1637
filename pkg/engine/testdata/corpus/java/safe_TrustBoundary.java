// safe: java.trustbound.session
package com.example.cart;

import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpSession;

public class CartServlet {
    public void add(HttpServletRequest request) {
        HttpSession session = request.getSession();
        int quantity = Integer.parseInt(request.getParameter("qty"));
        session.setAttribute("lastQuantity", quantity);
        session.setAttribute("visited", "yes");
    }
}
