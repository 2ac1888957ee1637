// safe: java.xss.writer
package com.example.pages;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

public class Greeting {
    public void show(HttpServletRequest request, HttpServletResponse response) throws IOException {
        Map<String, String> parts = new HashMap<>();
        parts.put("title", "Welcome");
        parts.put("visitor", request.getParameter("who"));
        response.getWriter().println("<h1>" + parts.get("title") + "</h1>");
    }
}
