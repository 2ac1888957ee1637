// safe: java.cmdi.exec
package com.example.ops;

import javax.servlet.http.HttpServletRequest;

public class Diagnostics {
    public void run(HttpServletRequest request) throws Exception {
        String target = request.getParameter("target");
        int attempts = 4;
        String command = "uptime";
        if (attempts * 2 < 5) {
            command = "traceroute " + target;
        }
        Runtime.getRuntime().exec(command);
    }
}
