<?php
// Digests and ciphers chosen by name.
$fingerprint = hash('md5', $document); // vuln: php.crypto.weak-hash
$algo = 'sha1';
$ctx = hash_init($algo); // vuln: php.crypto.weak-hash
$sealed = openssl_encrypt($payload, 'des-ede3-cbc', $key, 0, $iv); // vuln: php.crypto.weak-cipher
$mode = 'aes-128-ecb';
$plain = openssl_decrypt($sealed, $mode, $key); // vuln: php.crypto.weak-cipher
