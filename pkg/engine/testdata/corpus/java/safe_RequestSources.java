// safe: java.sqli.string-query java.path.file-access java.redirect.open java.cmdi.exec
package com.example.misc;

import java.io.BufferedReader;
import java.io.File;
import java.sql.Connection;
import java.util.Map;
import java.util.UUID;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

public class Intake {
    private Connection db;

    public void handle(HttpServletRequest request, HttpServletResponse response) throws Exception {
        String[] ids = request.getParameterValues("id");
        UUID draft = UUID.fromString(ids[0]);
        db.createStatement().execute("DELETE FROM drafts WHERE id = '" + draft + "'");

        Map<String, String[]> all = request.getParameterMap();
        String folder = all.containsKey("dir") ? "shared" : "private";
        new File("/srv/uploads", folder).mkdirs();

        String back = request.getQueryString();
        response.sendRedirect(back == null ? "/login" : "/login?again=1");

        BufferedReader body = request.getReader();
        int size = body.readLine().length();
        Runtime.getRuntime().exec(new String[] {"bash", "-c", "truncate -s " + size + " /tmp/buffer"});
    }
}
