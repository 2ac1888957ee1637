package com.acme.inventory;

import org.springframework.boot.SpringApplication;

public class Application {
    public static void main(String[] args) {
        SpringApplication.run(Application.class, args);
    }
}
