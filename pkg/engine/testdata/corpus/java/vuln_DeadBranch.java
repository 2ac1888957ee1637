package com.example.ops;

import javax.servlet.http.HttpServletRequest;

public class Diagnostics {
    public void run(HttpServletRequest request) throws Exception {
        String target = request.getParameter("target");
        int attempts = 4;
        String command = attempts * 2 > 5 ? "traceroute " + target : "uptime";
        Runtime.getRuntime().exec(command); // vuln: java.cmdi.exec
    }
}
