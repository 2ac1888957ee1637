<?php
// safe: php.sqli.string-query php.xss.echo
// The captured values are escaped before the callbacks are made.
$db = new mysqli('localhost', 'blog', getenv('DB_PASS'), 'blog');
$author = $db->real_escape_string($_GET['author']);

$byAuthor = function (string $table) use ($db, $author) {
    return $db->query("SELECT * FROM $table WHERE author = '$author'");
};
$byAuthor('posts');

$tag = htmlspecialchars($_GET['tag'], ENT_QUOTES, 'UTF-8');
$render = fn(string $title) => "<li>" . $title . " (" . $tag . ")</li>";
echo $render('Latest');
