package com.example.flags;

import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

public class FeatureFlags {
    public void render(HttpServletRequest request, HttpServletResponse response) throws Exception {
        String label = request.getParameter("label");
        String mode = " Preview ".trim().toLowerCase();
        String shown = "default";
        if (mode.equals("preview") && mode.substring(0, 3).equals("pre")) {
            shown = label;
        }
        response.getWriter().print(shown); // vuln: java.xss.writer
    }
}
