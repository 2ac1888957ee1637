package com.example.integrity;

import java.io.InputStream;
import java.security.MessageDigest;
import java.util.Properties;

public class Checksums {
    public byte[] sum(byte[] data) throws Exception {
        Properties props = new Properties();
        try (InputStream in = Checksums.class.getClassLoader().getResourceAsStream("integrity.properties")) {
            props.load(in);
        }
        String algorithm = props.getProperty("checksum.algorithm", "SHA-512");
        MessageDigest md = MessageDigest.getInstance(algorithm, "SUN"); // vuln: java.crypto.weak-hash
        return md.digest(data);
    }
}
