// safe: java.sqli.string-query
package com.example.api;

import java.sql.Connection;
import java.sql.ResultSet;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.QueryParam;
import org.owasp.esapi.ESAPI;
import org.owasp.esapi.codecs.OracleCodec;

@Path("/stock")
public class StockResource {
    private Connection db;

    @GET
    public String level(@QueryParam("sku") String sku, @QueryParam("page") String page) throws Exception {
        long p = Long.parseLong(page);
        String safeSku = ESAPI.encoder().encodeForSQL(new OracleCodec(), sku);
        ResultSet rs = db.createStatement().executeQuery("SELECT qty FROM stock WHERE sku = '" + safeSku + "' OFFSET " + p);
        return rs.next() ? rs.getString(1) : "0";
    }
}
