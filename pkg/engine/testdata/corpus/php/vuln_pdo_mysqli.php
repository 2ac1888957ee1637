<?php
// Statements built from form fields with PDO and with mysqli objects.
$pdo = new PDO('mysql:host=localhost;dbname=crm', 'crm', getenv('DB_PASS'));
$email = $_POST['email'];
$stmt = $pdo->prepare("SELECT * FROM contacts WHERE email = '" . $email . "'"); // vuln: php.sqli.string-query
$stmt->execute();
$pdo->exec("DELETE FROM sessions WHERE token = '" . $_COOKIE['token'] . "'"); // vuln: php.sqli.string-query

$mysqli = new mysqli('localhost', 'crm', getenv('DB_PASS'), 'crm');
$company = $_POST['company'];
$mysqli->multi_query("UPDATE contacts SET company = '$company'"); // vuln: php.sqli.string-query
pg_query("SELECT * FROM audit WHERE actor = '" . $_GET['actor'] . "'"); // vuln: php.sqli.string-query
