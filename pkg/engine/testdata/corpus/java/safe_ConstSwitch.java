// safe: java.path.file-access
package com.example.files;

import java.io.File;
import javax.servlet.http.HttpServletRequest;

public class Downloads {
    public File pick(HttpServletRequest request) {
        String requested = request.getParameter("name");
        String mode = "archive";
        String name;
        switch (mode) {
            case "live":
                name = requested;
                break;
            case "archive":
                name = "archive.txt";
                break;
            default:
                name = requested;
        }
        return new File("/var/data/" + name);
    }
}
