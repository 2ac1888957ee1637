// safe: java.path.file-access
package com.example.storage;

import java.io.FileInputStream;
import java.io.InputStream;
import javax.servlet.http.HttpServletRequest;

public class Archive {
    static String depthName(String s, int depth) {
        if (depth <= 0 || s.isEmpty()) {
            return "level-" + depth;
        }
        return depthName(s.substring(1), depth - 1);
    }

    public InputStream open(HttpServletRequest request) throws Exception {
        String entry = depthName(request.getParameter("entry"), 3);
        return new FileInputStream("/srv/archive/" + entry.length());
    }
}
