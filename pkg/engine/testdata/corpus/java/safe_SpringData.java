// safe: java.sqli.string-query
package com.example.inventory;

import jakarta.persistence.EntityManager;
import java.util.List;
import java.util.Map;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

@RestController
public class InventoryController {
    private final JdbcTemplate jdbc;
    private final EntityManager em;

    public InventoryController(JdbcTemplate jdbc, EntityManager em) {
        this.jdbc = jdbc;
        this.em = em;
    }

    @GetMapping("/items")
    public List<Map<String, Object>> items(@RequestParam String category) {
        return jdbc.queryForList("SELECT * FROM items WHERE category = ?", category);
    }

    @GetMapping("/suppliers")
    public List<?> suppliers(@RequestParam("country") String country) {
        String kind = "code";
        String column = switch (kind) {
            case "code" -> "s.code";
            default -> "s." + country;
        };
        return em.createQuery("SELECT s FROM Supplier s WHERE " + column + " = :c").setParameter("c", country).getResultList();
    }
}
