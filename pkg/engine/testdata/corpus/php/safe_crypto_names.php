<?php
// safe: php.crypto.weak-hash php.crypto.weak-cipher
// Current digests and an authenticated cipher.
$fingerprint = hash('sha256', $document);
$algo = 'sha3-512';
$ctx = hash_init($algo);
$iv = random_bytes(12);
$sealed = openssl_encrypt($payload, 'aes-256-gcm', $key, OPENSSL_RAW_DATA, $iv, $tag);
$legacy = false;
$mode = $legacy ? 'des-cbc' : 'aes-256-gcm';
$plain = openssl_decrypt($sealed, $mode, $key, OPENSSL_RAW_DATA, $iv, $tag);
