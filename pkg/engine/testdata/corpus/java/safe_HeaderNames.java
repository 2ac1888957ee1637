// safe: java.sqli.string-query
package com.example.audit;

import java.sql.Connection;
import java.util.Enumeration;
import javax.servlet.http.HttpServletRequest;

public class HeaderAudit {
    private Connection db;

    public void record(HttpServletRequest request) throws Exception {
        Enumeration<String> names = request.getHeaderNames();
        int count = 0;
        StringBuilder seen = new StringBuilder("count=");
        while (names.hasMoreElements()) {
            if (names.nextElement().startsWith("X-")) {
                count++;
            }
        }
        seen.append(count);
        db.createStatement().executeUpdate("INSERT INTO audit(headers) VALUES ('" + seen + "')");
    }
}
