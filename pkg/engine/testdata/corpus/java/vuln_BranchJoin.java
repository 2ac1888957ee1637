package com.example.reports;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import javax.servlet.http.HttpServletRequest;

public class ReportQuery {
    private Connection db;

    public ResultSet monthly(HttpServletRequest request, boolean custom) throws Exception {
        String region = "EMEA";
        if (custom) {
            region = request.getParameter("region");
        }
        Statement st = db.createStatement();
        return st.executeQuery("SELECT total FROM sales WHERE region = '" + region + "'"); // vuln: java.sqli.string-query
    }
}
