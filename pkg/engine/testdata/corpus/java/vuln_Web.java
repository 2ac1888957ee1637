package com.example.web;

import java.io.File;
import java.io.IOException;
import java.net.URL;
import java.nio.file.Files;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

public class WebServlet {
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String name = request.getParameter("name");
        response.getWriter().println("<p>Hello " + name + "</p>"); // vuln: java.xss.writer

        String file = request.getParameter("file");
        File f = new File("/srv/files/" + file); // vuln: java.path.file-access
        byte[] data = Files.readAllBytes(f.toPath());

        String target = request.getParameter("url");
        URL url = new URL(target);
        url.openStream().close(); // vuln: java.ssrf.request

        response.sendRedirect(request.getParameter("next")); // vuln: java.redirect.open
    }
}
