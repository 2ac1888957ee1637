// safe: java.sqli.string-query
package com.example.orders;

import java.sql.Connection;
import java.sql.ResultSet;
import javax.servlet.http.HttpServletRequest;

public class OrderLookup {
    private Connection db;

    public ResultSet find(HttpServletRequest request) throws Exception {
        String raw = request.getParameter("id");
        String key;
        try {
            key = String.valueOf(Integer.parseInt(raw));
        } catch (NumberFormatException e) {
            key = "0";
        }
        return db.createStatement().executeQuery("SELECT * FROM orders WHERE ref = '" + key + "'");
    }
}
