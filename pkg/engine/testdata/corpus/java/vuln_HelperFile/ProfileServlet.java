package com.example.profile;

import java.io.IOException;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

public class ProfileServlet extends HttpServlet {
    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String bio = Markup.paragraph(request.getParameter("bio"));
        response.getWriter().write(bio); // vuln: java.xss.writer
    }
}
