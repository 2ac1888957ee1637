<?php
// Callbacks capture request data: one by use (), one as an arrow function.
$db = new mysqli('localhost', 'blog', getenv('DB_PASS'), 'blog');
$author = $_GET['author'];

$byAuthor = function (string $table) use ($db, $author) {
    return $db->query("SELECT * FROM $table WHERE author = '$author'"); // vuln: php.sqli.string-query
};
$byAuthor('posts');

$tag = $_GET['tag'];
$render = fn(string $title) => "<li>" . $title . " (" . $tag . ")</li>";
echo $render('Latest'); // vuln: php.xss.echo
