<?php
// safe: php.sqli.string-query
// Articles stored in the database, searched with a bound parameter.

namespace App\Repository;

use PDO;

class ArticleRepository
{
    public function __construct(private PDO $pdo)
    {
    }

    public function search(string $term): array
    {
        $stmt = $this->pdo->prepare("SELECT id, title FROM articles WHERE title LIKE ?");
        $stmt->execute(['%' . $term . '%']);
        return $stmt->fetchAll();
    }
}
