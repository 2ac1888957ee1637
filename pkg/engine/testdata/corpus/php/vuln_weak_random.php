<?php
// Session and remember-me values made with predictable generators.
$remember = md5(uniqid() . mt_rand());
setcookie('remember_me', $remember, ['expires' => time() + 86400, 'secure' => true, 'httponly' => true]); // vuln: php.weakrand.security-use
session_id(sha1(rand())); // vuln: php.weakrand.security-use
$iv = substr(str_shuffle('0123456789abcdef0123456789abcdef'), 0, 16);
$cipher = openssl_encrypt($payload, 'aes-256-cbc', $key, 0, $iv); // vuln: php.weakrand.security-use
