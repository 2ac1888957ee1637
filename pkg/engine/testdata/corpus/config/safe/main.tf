# safe: terraform.public-bucket terraform.open-security-group terraform.public-database
# safe: terraform.unencrypted-storage terraform.public-access-block-disabled
resource "aws_s3_bucket_acl" "site" {
  bucket = aws_s3_bucket.site.id
  acl    = "private"
}

resource "aws_security_group" "web" {
  name = "web"
  ingress {
    from_port   = 443
    to_port     = 443
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }
  ingress {
    from_port   = 22
    to_port     = 22
    protocol    = "tcp"
    cidr_blocks = ["10.0.0.0/8"]
  }
}

resource "aws_db_instance" "main" {
  engine              = "postgres"
  publicly_accessible = false
  storage_encrypted   = true
}

resource "aws_s3_bucket_public_access_block" "site" {
  bucket            = aws_s3_bucket.site.id
  block_public_acls = true
}
