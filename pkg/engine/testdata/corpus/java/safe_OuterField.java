// safe: java.cmdi.exec
package com.example.mail;

import javax.servlet.http.HttpServletRequest;

public class Mailer {
    private String recipient = "ops@example.org";
    private String note;

    class Job implements Runnable {
        public void run() {
            try {
                Runtime.getRuntime().exec("sendmail " + recipient);
            } catch (java.io.IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    public void send(HttpServletRequest request) {
        note = request.getParameter("to");
        Job job = new Job();
        job.run();
    }
}
