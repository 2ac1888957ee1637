// safe: java.sqli.string-query
package com.example.reports;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import javax.servlet.http.HttpServletRequest;

public class ReportQuery {
    private Connection db;

    public ResultSet monthly(HttpServletRequest request) throws Exception {
        String order = request.getParameter("order");
        String column;
        if ("amount".equals(order)) {
            column = "total";
        } else {
            column = "created_at";
        }
        Statement st = db.createStatement();
        return st.executeQuery("SELECT total FROM sales ORDER BY " + column);
    }
}
