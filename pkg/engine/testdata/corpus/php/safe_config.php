<?php
// safe: php.crypto.weak-password-hash php.crypto.weak-random php.secrets.hardcoded-credential
// safe: php.tls.verify-disabled php.debug.display-errors
// The same settings done safely.

function store_password($pdo, $user, $password)
{
    $hash = password_hash($password, PASSWORD_DEFAULT);
    $pdo->prepare("UPDATE users SET pw = ? WHERE id = ?")->execute([$hash, $user]);
}
$etag = md5($content);
$cacheKey = sha1($url);

$token = bin2hex(random_bytes(32));
$resetToken = random_int(100000, 999999);
$dice = mt_rand(1, 6);

$db_password = getenv("DB_PASSWORD");
define('API_KEY', getenv('API_KEY'));
class Mailer
{
    private $smtpPassword = "";
}
$config = [
    'aws_secret' => env('AWS_SECRET_ACCESS_KEY'),
    'password' => 'changeme',
];

$ch = curl_init("https://partner.example.com/api");
curl_setopt($ch, CURLOPT_SSL_VERIFYPEER, true);
curl_setopt($ch, CURLOPT_SSL_VERIFYHOST, 2);
$client = new GuzzleHttp\Client([
    'verify' => '/etc/ssl/certs/partner-ca.pem',
]);

ini_set('display_errors', '0');
ini_set('log_errors', '1');
