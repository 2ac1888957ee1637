<?php
// safe: php.code.eval
// Only fixed callables run.
$checks = ['positive' => fn($v) => $v > 0, 'even' => fn($v) => $v % 2 === 0];
$name = ($_POST['check'] ?? '') === 'even' ? 'even' : 'positive';
$ok = call_user_func($checks[$name], (int) ($_POST['value'] ?? 0));
assert($ok === true || $ok === false);
