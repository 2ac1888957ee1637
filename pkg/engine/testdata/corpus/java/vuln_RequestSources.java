package com.example.misc;

import java.io.BufferedReader;
import java.io.File;
import java.sql.Connection;
import java.util.Map;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

public class Intake {
    private Connection db;

    public void handle(HttpServletRequest request, HttpServletResponse response) throws Exception {
        String[] ids = request.getParameterValues("id");
        db.createStatement().execute("DELETE FROM drafts WHERE id = " + ids[0]); // vuln: java.sqli.string-query

        Map<String, String[]> all = request.getParameterMap();
        String[] dirs = all.get("dir");
        new File("/srv/uploads", dirs[0]).mkdirs(); // vuln: java.path.file-access

        String back = request.getQueryString();
        response.sendRedirect("/login?" + back); // vuln: java.redirect.open

        BufferedReader body = request.getReader();
        String script = body.readLine();
        Runtime.getRuntime().exec(new String[] {"bash", "-c", script}); // vuln: java.cmdi.exec
    }
}
