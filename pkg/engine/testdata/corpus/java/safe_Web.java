// safe: java.xss.writer java.path.file-access java.ssrf.request java.redirect.open
package com.example.web;

import java.io.File;
import java.io.IOException;
import java.net.URL;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.apache.commons.io.FilenameUtils;
import org.owasp.encoder.Encode;

public class WebServlet {
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String name = request.getParameter("name");
        response.getWriter().println("<p>Hello " + Encode.forHtml(name) + "</p>");

        String file = FilenameUtils.getName(request.getParameter("file"));
        File f = new File("/srv/files/", file);

        String q = URLEncoder.encode(request.getParameter("q"), StandardCharsets.UTF_8);
        URL url = new URL("https://api.example.com/search?q=" + q);
        url.openStream().close();

        response.sendRedirect("/dashboard");
    }
}
