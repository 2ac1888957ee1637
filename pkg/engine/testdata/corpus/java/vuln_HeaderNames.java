package com.example.audit;

import java.sql.Connection;
import java.util.Enumeration;
import javax.servlet.http.HttpServletRequest;

public class HeaderAudit {
    private Connection db;

    public void record(HttpServletRequest request) throws Exception {
        Enumeration<String> names = request.getHeaderNames();
        StringBuilder seen = new StringBuilder();
        while (names.hasMoreElements()) {
            String n = names.nextElement();
            seen.append(n).append(',');
        }
        seen.reverse();
        db.createStatement().executeUpdate("INSERT INTO audit(headers) VALUES ('" + seen + "')"); // vuln: java.sqli.string-query
    }
}
