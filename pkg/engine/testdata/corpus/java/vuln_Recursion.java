package com.example.storage;

import java.io.FileInputStream;
import java.io.InputStream;
import javax.servlet.http.HttpServletRequest;

public class Archive {
    static String stripSlashes(String s) {
        if (s.startsWith("/")) {
            return stripSlashes(s.substring(1));
        }
        return s;
    }

    public InputStream open(HttpServletRequest request) throws Exception {
        String entry = stripSlashes(request.getParameter("entry"));
        return new FileInputStream("/srv/archive/" + entry); // vuln: java.path.file-access
    }
}
