// safe: java.cors.credentials-any-origin java.secrets.hardcoded-credential java.tls.trust-all
// safe: java.jwt.unverified java.cors.reflect-origin java.debug.stack-trace
package com.example.config;

import com.auth0.jwt.JWT;
import com.auth0.jwt.algorithms.Algorithm;
import com.auth0.jwt.interfaces.DecodedJWT;
import java.util.Set;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.springframework.web.bind.annotation.CrossOrigin;

@CrossOrigin(origins = "https://app.example.com", allowCredentials = "true")
public class ConfigController {
    private static final String DB_PASSWORD = System.getenv("DB_PASSWORD");
    private static final Set<String> ALLOWED = Set.of("https://app.example.com");

    public String user(String token) {
        DecodedJWT jwt = JWT.require(Algorithm.HMAC256(System.getenv("JWT_KEY"))).build().verify(token);
        return jwt.getSubject();
    }

    public void cors(HttpServletRequest request, HttpServletResponse response) {
        String origin = request.getHeader("Origin");
        if (ALLOWED.contains(origin)) {
            response.setHeader("Access-Control-Allow-Origin", origin);
        }
    }

    public void error(Exception e, HttpServletResponse response) throws Exception {
        response.sendError(500, "internal error");
    }
}
