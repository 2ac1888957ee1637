<?php
// Weak cryptography, hard-coded credentials, disabled TLS checks and debug output.

function store_password($pdo, $user, $password)
{
    $hash = md5($password); // vuln: php.crypto.weak-password-hash
    $pdo->prepare("UPDATE users SET pw = ? WHERE id = ?")->execute([$hash, $user]);
}
$pwHash = hash('sha1', $salt . $_POST['password']); // vuln: php.crypto.weak-password-hash

$token = md5(mt_rand()); // vuln: php.crypto.weak-random
$resetToken = substr(str_shuffle("abcdefghijklmnopqrstuvwxyz0123456789"), 0, 16); // vuln: php.crypto.weak-random

$db_password = "Sup3rS3cretPass"; // vuln: php.secrets.hardcoded-credential
define('API_KEY', 'sk_live_51HxQ2aLk9'); // vuln: php.secrets.hardcoded-credential
class Mailer
{
    private $smtpPassword = "mailpass2024"; // vuln: php.secrets.hardcoded-credential
}
$config = [
    'aws_secret' => 'wJalrXUtnFEMI/K7MDENG', // vuln: php.secrets.hardcoded-credential
];

$ch = curl_init("https://partner.example.com/api");
curl_setopt($ch, CURLOPT_SSL_VERIFYPEER, false); // vuln: php.tls.verify-disabled
curl_setopt($ch, CURLOPT_SSL_VERIFYHOST, 0); // vuln: php.tls.verify-disabled
$client = new GuzzleHttp\Client([
    'verify' => false, // vuln: php.tls.verify-disabled
]);

ini_set('display_errors', '1'); // vuln: php.debug.display-errors
ini_set('display_errors', 'On'); // vuln: php.debug.display-errors
