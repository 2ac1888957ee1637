package com.example.api;

import java.sql.Connection;
import java.sql.ResultSet;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.QueryParam;

@Path("/stock")
public class StockResource {
    private Connection db;

    @GET
    public String level(@QueryParam("sku") String sku) throws Exception {
        ResultSet rs = db.createStatement().executeQuery("SELECT qty FROM stock WHERE sku = '" + sku + "'"); // vuln: java.sqli.string-query
        return rs.next() ? rs.getString(1) : "0";
    }
}
