<?php
// Redirects, dynamic code and deserialization driven by the request.
$return = $_GET['return'];
header('Location: ' . $return); // vuln: php.redirect.open

$formula = $_POST['formula'];
eval('return ' . $formula . ';'); // vuln: php.code.eval
$hook = $_GET['hook'];
call_user_func_array($hook, [$formula]); // vuln: php.code.eval

$cart = unserialize(base64_decode($_COOKIE['cart'])); // vuln: php.deser.unserialize
