// safe: java.xss.writer
package com.example.flags;

import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

public class FeatureFlags {
    public void render(HttpServletRequest request, HttpServletResponse response) throws Exception {
        String label = request.getParameter("label");
        String mode = " Preview ".trim().toUpperCase();
        String shown = "default";
        if (mode.equals("preview") || mode.indexOf('X') >= 0) {
            shown = label;
        }
        response.getWriter().print(shown);
    }
}
