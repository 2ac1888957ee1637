package com.example.files;

import java.io.File;
import javax.servlet.http.HttpServletRequest;

public class Downloads {
    public File pick(HttpServletRequest request) {
        String requested = request.getParameter("name");
        String mode = "archive";
        String name;
        switch (mode.charAt(1)) {
            case 'a':
                name = "readme.txt";
                break;
            case 'r':
                name = requested;
                break;
            default:
                name = "index.txt";
        }
        return new File("/var/data/" + name); // vuln: java.path.file-access
    }
}
