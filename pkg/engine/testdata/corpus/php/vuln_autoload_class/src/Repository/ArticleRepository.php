<?php
// Articles stored in the database.

namespace App\Repository;

use PDO;

class ArticleRepository
{
    public function __construct(private PDO $pdo)
    {
    }

    public function search(string $term): array
    {
        $sql = "SELECT id, title FROM articles WHERE title LIKE '%" . $term . "%'";
        return $this->pdo->query($sql)->fetchAll(); // vuln: php.sqli.string-query
    }
}
