// safe: java.xss.writer
package com.example.pages;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URLDecoder;
import javax.servlet.http.Cookie;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.apache.commons.lang3.StringEscapeUtils;

public class Banner {
    public void render(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String name = "guest";
        Cookie[] cookies = request.getCookies();
        if (cookies != null) {
            for (Cookie c : cookies) {
                if ("display".equals(c.getName())) {
                    name = URLDecoder.decode(c.getValue(), "UTF-8");
                }
            }
        }
        PrintWriter out = response.getWriter();
        out.printf("<div>Hi %s</div>", StringEscapeUtils.escapeHtml4(name));
    }
}
