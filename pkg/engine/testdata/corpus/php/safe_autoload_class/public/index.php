<?php
// safe: php.sqli.string-query php.xss.echo
// Front controller: the class comes from the autoloader.

use App\Repository\ArticleRepository;

require __DIR__ . '/../vendor/autoload.php';

$repo = new ArticleRepository(new PDO('sqlite:/srv/app.db'));
foreach ($repo->search($_GET['q'] ?? '') as $row) {
    echo htmlspecialchars($row['title']);
}
