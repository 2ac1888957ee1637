<?php
// safe: php.redirect.open php.code.eval php.deser.unserialize
// Fixed redirect targets, an allow list of handlers, JSON.
$targets = ['home' => '/', 'account' => '/account'];
$key = $_GET['return'] ?? 'home';
header('Location: ' . ($key === 'account' ? $targets['account'] : $targets['home']));

$handlers = ['sum' => 'array_sum', 'max' => 'max'];
$hook = match ($_GET['hook'] ?? '') {
    'max' => $handlers['max'],
    default => $handlers['sum'],
};
call_user_func_array($hook, [[1, 2, 3]]);

$cart = json_decode(base64_decode($_COOKIE['cart']), true);
