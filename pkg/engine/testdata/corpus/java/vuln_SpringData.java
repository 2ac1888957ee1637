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
        String sql = String.format("SELECT * FROM items WHERE category = '%s'", category);
        return jdbc.queryForList(sql); // vuln: java.sqli.string-query
    }

    @GetMapping("/suppliers")
    public List<?> suppliers(@RequestParam("country") String country) {
        String where = switch (country.length()) {
            case 2 -> "code = '" + country + "'";
            default -> "name = '" + country + "'";
        };
        return em.createQuery("SELECT s FROM Supplier s WHERE s." + where).getResultList(); // vuln: java.sqli.string-query
    }
}
