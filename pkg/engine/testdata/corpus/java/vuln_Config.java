package com.example.config;

import com.auth0.jwt.JWT;
import com.auth0.jwt.interfaces.DecodedJWT;
import java.security.cert.X509Certificate;
import javax.net.ssl.X509TrustManager;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.springframework.web.bind.annotation.CrossOrigin;

@CrossOrigin(origins = "*", allowCredentials = "true") // vuln: java.cors.credentials-any-origin
public class ConfigController {
    private static final String DB_PASSWORD = "Sup3rS3cretPassw0rd"; // vuln: java.secrets.hardcoded-credential

    static class TrustAll implements X509TrustManager {
        public void checkClientTrusted(X509Certificate[] chain, String authType) {}
        public void checkServerTrusted(X509Certificate[] chain, String authType) {} // vuln: java.tls.trust-all
        public X509Certificate[] getAcceptedIssuers() { return new X509Certificate[0]; }
    }

    public String user(String token) {
        DecodedJWT jwt = JWT.decode(token); // vuln: java.jwt.unverified
        return jwt.getSubject();
    }

    public void cors(HttpServletRequest request, HttpServletResponse response) {
        response.setHeader("Access-Control-Allow-Origin", request.getHeader("Origin")); // vuln: java.cors.reflect-origin
    }

    public void error(Exception e, HttpServletResponse response) throws Exception {
        e.printStackTrace(response.getWriter()); // vuln: java.debug.stack-trace
    }
}
