package com.example.mail;

import javax.servlet.http.HttpServletRequest;

public class Mailer {
    private String recipient = "ops@example.org";

    class Job implements Runnable {
        public void run() {
            try {
                Runtime.getRuntime().exec("sendmail " + recipient); // vuln: java.cmdi.exec
            } catch (java.io.IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    public void send(HttpServletRequest request) {
        recipient = request.getParameter("to");
        Job job = new Job();
        job.run();
    }
}
