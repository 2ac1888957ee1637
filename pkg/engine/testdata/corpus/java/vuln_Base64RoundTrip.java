package com.example.jobs;

import java.util.Base64;
import javax.servlet.http.HttpServletRequest;

public class JobRunner {
    public void start(HttpServletRequest request) throws Exception {
        String encoded = Base64.getEncoder().encodeToString(request.getParameter("job").getBytes());
        String job = new String(Base64.getDecoder().decode(encoded));
        String[] cmd = {"sh", "-c", "run-job " + job};
        Runtime.getRuntime().exec(cmd); // vuln: java.cmdi.exec
    }
}
